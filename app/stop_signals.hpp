#pragma once
// A long-running command (serve, gateway) stops on SIGINT or SIGTERM: the signals are blocked in every
// thread (threads started later inherit the mask) and awaited here, on the main thread.
#include <signal.h>

namespace llmchaos::app {

class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  }
  // Blocks until one arrives; returns its name.
  const char* wait() {
    int signal = 0;
    sigwait(&set_, &signal);
    return signal == SIGINT ? "SIGINT" : "SIGTERM";
  }

 private:
  sigset_t set_{};
};

}  // namespace llmchaos::app

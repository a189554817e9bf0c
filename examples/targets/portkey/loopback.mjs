// Preloaded by start (node --import): the gateway's server listens on 127.0.0.1 only. Portkey's
// start-server.js calls serve({fetch, port}) without a host (all interfaces) and has no flag for it.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number") args.splice(1, typeof args[1] === "string" ? 1 : 0, "127.0.0.1");
  else if (args[0] && typeof args[0] === "object" && args[0].port !== undefined && !args[0].host)
    args[0] = { ...args[0], host: "127.0.0.1" };
  return listen.apply(this, args);
};

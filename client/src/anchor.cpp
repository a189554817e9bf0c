// placeholder until the first unit lands
namespace llmchaos { void client_anchor() {} }

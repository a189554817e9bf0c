// placeholder until the first unit lands
namespace llmchaos { void experiments_anchor() {} }

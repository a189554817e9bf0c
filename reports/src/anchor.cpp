// placeholder until the first unit lands
namespace llmchaos { void reports_anchor() {} }

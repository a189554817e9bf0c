// placeholder until the first unit lands
namespace llmchaos { void mockprovider_anchor() {} }

module llmchaos.example/apps/classifier

go 1.22

require llmchaos.example/llmchaostest v0.0.0

replace llmchaos.example/llmchaostest => ../../../go/llmchaostest

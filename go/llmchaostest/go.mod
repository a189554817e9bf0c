module llmchaos.example/llmchaostest

go 1.22

package clients

import (
	"context"
	"errors"
	"io"
	"net/http"

	goopenai "github.com/sashabaranov/go-openai"

	"llmchaos.example/goclients/internal/chaos"
	"llmchaos.example/goclients/internal/policy"
)

func init() { register("go-openai", "openai", "github.com/sashabaranov/go-openai", goOpenAIChat) }

// goOpenAIChat: github.com/sashabaranov/go-openai (no retries of its own, http.Client without a timeout).
// The default's stream loop is the README's: Recv until io.EOF.
func goOpenAIChat(ctx context.Context, route chaos.Route, env chaos.Env, h policy.Hooks, strict bool) (chaos.Answer, error) {
	cfg := goopenai.DefaultConfig("sk-llmchaos-example")
	cfg.BaseURL = route.BaseURL
	var next http.RoundTripper
	if strict {
		next = h.HTTPClient.Transport
	}
	// go-openai has no per-request header option: the key rides on the client's transport.
	cfg.HTTPClient = &http.Client{Transport: withHeader{"Idempotency-Key", env.OperationID, next}}
	client := goopenai.NewClientWithConfig(cfg)
	messages := []goopenai.ChatCompletionMessage{{Role: goopenai.ChatMessageRoleUser, Content: env.Request.Prompt}}
	if env.Request.Prefill {
		messages = append(messages, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleAssistant, Content: chaos.Prefill})
	}
	req := goopenai.ChatCompletionRequest{Model: env.Request.Model, Messages: messages}
	if !env.Request.Stream {
		r, err := client.CreateChatCompletion(ctx, req)
		if err != nil {
			return chaos.Answer{}, err
		}
		a := chaos.Answer{Model: r.Model, OutputTokens: int64(r.Usage.CompletionTokens)}
		if len(r.Choices) > 0 {
			a.Text, a.FinishReason = r.Choices[0].Message.Content, string(r.Choices[0].FinishReason)
		}
		h.OnText(a.Text)
		return a, nil
	}
	req.Stream, req.StreamOptions = true, &goopenai.StreamOptions{IncludeUsage: true}
	stream, err := client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return chaos.Answer{}, err
	}
	defer stream.Close()
	h.OnOpen()
	var a chaos.Answer
	finished := false
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return chaos.Answer{}, err
		}
		a.Model = chunk.Model
		if chunk.Usage != nil {
			a.OutputTokens = int64(chunk.Usage.CompletionTokens)
		}
		for _, c := range chunk.Choices {
			a.Text += c.Delta.Content
			h.OnText(c.Delta.Content)
			if c.FinishReason != "" {
				a.FinishReason, finished = string(c.FinishReason), true
			}
		}
	}
	return streamEnd(a, finished, strict)
}

package clients

import (
	"context"

	"github.com/openai/openai-go/v2"
	"github.com/openai/openai-go/v2/option"

	"llmchaos.example/goclients/internal/chaos"
	"llmchaos.example/goclients/internal/policy"
)

func init() { register("openai-go-v2", "openai", "github.com/openai/openai-go/v2", openaiGoV2Chat) }

// openaiGoV2Chat: github.com/openai/openai-go/v2 (defaults: MaxRetries 2, no request timeout).
func openaiGoV2Chat(ctx context.Context, route chaos.Route, env chaos.Env, h policy.Hooks, strict bool) (chaos.Answer, error) {
	opts := []option.RequestOption{option.WithAPIKey("sk-llmchaos-example"), option.WithBaseURL(route.BaseURL),
		option.WithHeader("Idempotency-Key", env.OperationID)}
	if strict {
		opts = append(opts, option.WithMaxRetries(0), option.WithHTTPClient(h.HTTPClient))
	}
	client := openai.NewClient(opts...)
	messages := []openai.ChatCompletionMessageParamUnion{openai.UserMessage(env.Request.Prompt)}
	if env.Request.Prefill {
		messages = append(messages, openai.AssistantMessage(chaos.Prefill))
	}
	params := openai.ChatCompletionNewParams{Model: openai.ChatModel(env.Request.Model), Messages: messages}
	if !env.Request.Stream {
		r, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return chaos.Answer{}, err
		}
		a := chaos.Answer{Model: r.Model, OutputTokens: r.Usage.CompletionTokens}
		if len(r.Choices) > 0 {
			a.Text, a.FinishReason = r.Choices[0].Message.Content, string(r.Choices[0].FinishReason)
		}
		h.OnText(a.Text)
		return a, nil
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	h.OnOpen()
	var a chaos.Answer
	finished := false
	for stream.Next() {
		chunk := stream.Current()
		a.Model = chunk.Model
		if chunk.Usage.CompletionTokens > 0 {
			a.OutputTokens = chunk.Usage.CompletionTokens
		}
		for _, c := range chunk.Choices {
			a.Text += c.Delta.Content
			h.OnText(c.Delta.Content)
			if c.FinishReason != "" {
				a.FinishReason, finished = c.FinishReason, true
			}
		}
	}
	if err := stream.Err(); err != nil {
		return chaos.Answer{}, err
	}
	return streamEnd(a, finished, strict)
}

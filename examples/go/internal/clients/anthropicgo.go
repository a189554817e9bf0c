package clients

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"llmchaos.example/goclients/internal/chaos"
	"llmchaos.example/goclients/internal/policy"
)

func init() {
	register("anthropic-go", "anthropic", "github.com/anthropics/anthropic-sdk-go/v2", anthropicGoChat)
}

// anthropicGoChat: github.com/anthropics/anthropic-sdk-go/v2 (defaults: MaxRetries 2, 10 min timeout).
func anthropicGoChat(ctx context.Context, route chaos.Route, env chaos.Env, h policy.Hooks, strict bool) (chaos.Answer, error) {
	opts := []option.RequestOption{option.WithAPIKey("sk-ant-llmchaos-example"), option.WithBaseURL(route.BaseURL),
		option.WithHeader("Idempotency-Key", env.OperationID)}
	if strict {
		opts = append(opts, option.WithMaxRetries(0), option.WithHTTPClient(h.HTTPClient))
	}
	client := anthropic.NewClient(opts...)
	messages := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(env.Request.Prompt))}
	if env.Request.Prefill {
		messages = append(messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(chaos.Prefill)))
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(env.Request.Model), MaxTokens: 256, Messages: messages}
	if !env.Request.Stream {
		r, err := client.Messages.New(ctx, params)
		if err != nil {
			return chaos.Answer{}, err
		}
		a := chaos.Answer{Model: string(r.Model), OutputTokens: r.Usage.OutputTokens, FinishReason: string(r.StopReason)}
		for _, b := range r.Content {
			if b.Type == "text" {
				a.Text += b.Text
			}
		}
		h.OnText(a.Text)
		return a, nil
	}
	stream := client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	h.OnOpen()
	var a chaos.Answer
	finished := false
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			a.Model = string(ev.AsMessageStart().Message.Model)
		case "content_block_delta":
			if d := ev.AsContentBlockDelta().Delta; d.Type == "text_delta" {
				a.Text += d.Text
				h.OnText(d.Text)
			}
		case "message_delta":
			md := ev.AsMessageDelta()
			a.OutputTokens, a.FinishReason = md.Usage.OutputTokens, string(md.Delta.StopReason)
			// The stop reason ends the answer; message_stop after it is the stream's sentinel (a clean
			// end without it is a whole answer, SPEC's no_terminator; a cut body is the watch's to see).
			finished = finished || md.Delta.StopReason != ""
		case "message_stop":
			finished = true
		}
	}
	if err := stream.Err(); err != nil {
		return chaos.Answer{}, err
	}
	return streamEnd(a, finished, strict)
}

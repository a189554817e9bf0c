//go:build before

package classifier

// decide as it was before the fix (go test -tags before): every 429 is retried on the same route, so an
// exhausted quota burns the attempts budget on a key that cannot serve, and the fallback comes late or
// never. The checker names it: case "quota 429 goes to the fallback, never retried", check `action`.
func decide(e *callError) action {
	switch {
	case e.status == 402:
		return nextRoute
	case e.status == 0, e.status == 408, e.status == 429, e.status >= 500:
		return retrySameRoute
	default:
		return stop
	}
}

//go:build !before

package classifier

// decide is the fixed policy: a quota or billing refusal does not clear by waiting, so it goes to the
// next route; a rate limit, an overload or a lost connection is retried on the same route; any other
// client error stops.
func decide(e *callError) action {
	switch {
	case e.status == 429 && isQuota(e.code), e.status == 402:
		return nextRoute
	case e.status == 0, e.status == 408, e.status == 429, e.status >= 500:
		return retrySameRoute
	default:
		return stop
	}
}

func isQuota(code string) bool {
	return code == "insufficient_quota" || code == "billing_hard_limit_reached" || code == "billing_error"
}

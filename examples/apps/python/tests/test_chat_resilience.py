"""chat_service's retry and fallback code under every case of examples/apps/cases/chat, judged by llmchaos."""
from dataclasses import asdict

import pytest

from chat_service import Route, classify


def service_routes(case):
    """The service's routes, wired to the session's base URLs (what its config would name in production)."""
    return [Route(name, case.base_url(name), case.dialect(name)) for name in case.route_order]


def classify_as_configured(case, request_id):
    """The service with the case's budget (what its production config would say)."""
    budget = case.policy["workflow"]
    return classify(case.request.get("prompt") or "Label: the service is great", service_routes(case),
                    max_attempts=budget["max_total_attempts"], deadline_s=budget["max_elapsed_ms"] / 1000,
                    attempt_timeout_s=budget["attempt_timeout_ms"] / 1000, request_id=request_id)


@pytest.mark.llmchaos_cases("../../cases/chat")
def test_classify_under_chaos(llmchaos, llmchaos_case_path):
    with llmchaos.case(llmchaos_case_path) as case:
        seen = [classify_as_configured(case, case.operation_id)]
        if case.alive_after:  # the case checks the service still answers once the routes are healthy
            seen.append(classify_as_configured(case, case.alive()))
        case.finish(seen=[asdict(s) for s in seen])


def test_quota_429_goes_to_the_fallback(llmchaos):
    """One case by hand, looking at the verdict itself."""
    with llmchaos.case("../../cases/chat/quota-429-falls-back.toml") as case:
        seen = classify("Label: fine", service_routes(case), request_id=case.operation_id)
        verdict = case.finish(outcome=seen.outcome, text=seen.text, route=seen.route, model=seen.model,
                              output_tokens=seen.output_tokens)
        assert seen.route == "backup"
        assert verdict.observed == "fallback"

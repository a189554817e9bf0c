"""A LiteLLM proxy pre-call hook (litellm_settings.callbacks in the config serve.py writes): passes the
caller's Idempotency-Key on to the provider. LiteLLM forwards only x-* client headers upstream (with
general_settings.forward_client_headers_to_llm_api), and the llmchaos ledger ties each attempt to its
request by that key; the hook changes nothing else (it is what Portkey's `forward_headers` does)."""
from litellm.integrations.custom_logger import CustomLogger


class ForwardIdempotencyKey(CustomLogger):
    async def async_pre_call_hook(self, user_api_key_dict, cache, data, call_type):
        headers = (data.get("proxy_server_request") or {}).get("headers") or {}
        key = next((v for k, v in headers.items() if k.lower() == "idempotency-key"), None)
        if key:
            data["headers"] = {**(data.get("headers") or {}), "Idempotency-Key": key}
        return data


proxy_handler_instance = ForwardIdempotencyKey()

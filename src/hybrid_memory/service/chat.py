"""The configured OpenAI-compatible chat model (``HYBRID_MEMORY_SUMMARY_MODEL``): one question, one answer.

Eviction summaries and digests ask it; OpenAI, Ollama, vLLM and the like answer. One client per
question leaves nothing open between them, and no retry: a caller that gets no answer falls back
to what it writes without a model.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from hybrid_memory.settings import LifecycleSettings


@dataclass(frozen=True)
class ChatModel:
    model: str
    base_url: str | None
    api_key: str
    timeout_s: float

    @classmethod
    def configured(cls, settings: LifecycleSettings) -> ChatModel | None:
        """The model the settings name; None without one."""
        if settings.summary_model is None:
            return None
        key = settings.summary_api_key
        return cls(
            model=settings.summary_model,
            base_url=settings.summary_base_url,
            api_key=key.get_secret_value() if key is not None else "no-key",
            timeout_s=settings.summary_timeout_s,
        )

    async def answer(self, system: str, user: str, *, max_tokens: int, temperature: float) -> str | None:
        """The model's answer to ``user`` under the instructions ``system``; None when it gives none."""
        import openai  # only when a model is configured

        async with openai.AsyncOpenAI(
            api_key=self.api_key, base_url=self.base_url, timeout=self.timeout_s, max_retries=0
        ) as client:
            with anyio.fail_after(self.timeout_s):
                response = await client.chat.completions.create(
                    model=self.model,
                    messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                    max_tokens=max_tokens,
                    temperature=temperature,
                )
        return response.choices[0].message.content if response.choices else None

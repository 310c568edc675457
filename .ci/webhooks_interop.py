"""Verifies the webhook samples printed by `cargo run --example webhook_samples` with the
Standard Webhooks reference library (PyPI `standardwebhooks`): every sample must verify with
each secret that signed it, and must fail with an unrelated secret or a changed body."""
import json
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

checked = 0
for line in sys.stdin:
    if not line.strip():
        continue
    sample = json.loads(line)
    body = sample["body"]
    for secret in sample["secrets"]:
        payload = Webhook(secret).verify(body, sample["headers"])
        assert payload["id"] == sample["headers"]["webhook-id"], payload
        checked += 1
    for forged, changed in (("whsec_" + "A" * 43 + "=", body), (sample["secrets"][0], body + " ")):
        try:
            Webhook(forged).verify(changed, sample["headers"])
        except WebhookVerificationError:
            continue
        sys.exit(f"a forged request verified: {sample['headers']}")
if checked < 9:
    sys.exit(f"only {checked} signatures checked")
print(f"standardwebhooks verified {checked} signatures of {sys.argv[0]}'s samples")

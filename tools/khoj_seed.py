"""Run in Khoj's own environment (.tools/khoj) after its migrations: the rows Khoj needs before its first start to
run offline against the suite's model server (../shared/NOTES.md, "Khoj 2.0.0b28"): its search model (embeddings from
the model server, and a local cross-encoder, which Khoj builds at every start though memories never use it), the
model server as an AI model API, and its chat model (the local folder as its tokenizer, so tiktoken downloads
nothing). The cross-encoder is a one-layer BERT with random weights, made once into `folder`.

    DJANGO_SETTINGS_MODULE=khoj.app.settings .tools/khoj/bin/python tools/khoj_seed.py <model server /v1> <folder>

The Khoj driver (harness/drivers/khoj/lifecycle.py) runs it once per database server, into the template every app's
database is copied from, and points the rows at each start's model server itself.
"""

from __future__ import annotations

import os
import sys

import django


def tiny_cross_encoder(folder: str) -> None:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    if os.path.isfile(os.path.join(folder, "config.json")):
        return
    os.makedirs(folder, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *(chr(c) for c in range(97, 123))]
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as out:
        out.write("\n".join(vocab) + "\n")
    BertTokenizerFast(vocab_file=os.path.join(folder, "vocab.txt")).save_pretrained(folder)
    config = BertConfig(vocab_size=len(vocab), hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
                        intermediate_size=8, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(folder)


def main(base_url: str, folder: str) -> int:
    django.setup()
    from khoj.database.models import AiModelApi, ChatModel, SearchModelConfig

    tiny_cross_encoder(folder)
    SearchModelConfig.objects.update_or_create(name="default", defaults={
        "embeddings_inference_endpoint_type": "openai", "embeddings_inference_endpoint": base_url,
        "embeddings_inference_endpoint_api_key": "memtest", "bi_encoder": "text-embedding-3-small",
        "cross_encoder": folder})
    api, _ = AiModelApi.objects.update_or_create(name="memtest", defaults={"api_key": "memtest",
                                                                          "api_base_url": base_url})
    # Named as the OpenAI model the model server stands in for, so that Khoj gives it that model's context size from
    # its own table (60,000 tokens), not the 10,000 of a model it does not know.
    ChatModel.objects.update_or_create(name="gpt-4o-mini", defaults={
        "model_type": "openai", "tokenizer": folder, "ai_model_api": api, "friendly_name": "memtest"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

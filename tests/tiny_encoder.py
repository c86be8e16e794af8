"""A tiny randomly initialised BERT written to a folder, as a Hugging Face model folder (no download): the
cross-encoder tests' encoder. Seconds to build and to fine-tune."""

from pathlib import Path

WORDS = ("who what where when wrote built lives is the a of in hamlet shakespeare paris france rome italy "
         "city capital play river big small red blue tree house dog cat rain sun moon ann bob ate").split()


def write_tiny_encoder(folder, seed=0, layers=2, hidden=16) -> Path:
    """A BERT of ``layers`` layers and ``hidden`` units with a word-level vocabulary of ``WORDS``, saved to ``folder``
    (config.json, model.safetensors, tokenizer.json and vocab.txt)."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "?", "."]
    (folder / "vocab.txt").write_text("\n".join(tokens) + "\n")
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(tokens)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tokenizer.save(str(folder / "tokenizer.json"))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(WORDS) + 7, hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=512)
    BertModel(config).save_pretrained(folder)
    return folder

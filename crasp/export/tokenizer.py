"""Pass: vocabulary -> a Hugging Face tokenizer that reads inputs as ``crasp run`` does.

The vocabulary and BOS travel inside every export as a ``PreTrainedTokenizerFast`` (a
``tokenizer.json``), so that TransformerLens' ``to_tokens`` and ``AutoTokenizer`` need nothing
from crasp. Ids are the checkpoint's: token ``vocab[t]`` is t, ``<bos>`` is ``len(vocab)``,
``<pad>`` is ``len(vocab) + 1`` (padding goes on the right: causal attention never lets a real
position read it), ``<unk>`` is ``len(vocab) + 2``. ``add_bos_token`` makes the tokenizer
prepend ``<bos>`` to every input, as the model expects (and as TransformerLens'
``to_tokens`` checks).

Pre-tokenization follows ``crasp.util.inputs.tokenize``: an input is split at whitespace; when every
token of the vocabulary is one character, each piece is further split into characters, so
``"(())"`` and ``"( ( ) )"`` read alike. A token outside the vocabulary becomes ``<unk>``,
whose embedding row is NaN (``crasp.export.blocks``): a float realization or trained run
answers only over its vocabulary, so every score of that string is NaN (the masked attention
weights multiply the NaN values too) instead of a silent answer.
"""

from __future__ import annotations

from tokenizers import Regex, Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

BOS = "<bos>"
PAD = "<pad>"
UNK = "<unk>"


def build_tokenizer(vocab: list[str], name: str = "crasp"):
    """The ``PreTrainedTokenizerFast`` of ``vocab`` (module docstring)."""
    ids = {token: index for index, token in enumerate(vocab)}
    ids[BOS], ids[PAD], ids[UNK] = len(vocab), len(vocab) + 1, len(vocab) + 2
    tokenizer = Tokenizer(models.WordLevel(ids, unk_token=UNK))
    split = [pre_tokenizers.WhitespaceSplit()]
    if all(len(token) == 1 for token in vocab):
        split.append(pre_tokenizers.Split(Regex("."), behavior="isolated"))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(split)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token=BOS, pad_token=PAD,
                                   unk_token=UNK,
                                   padding_side="right", add_bos_token=True,
                                   add_eos_token=False, name_or_path=name)

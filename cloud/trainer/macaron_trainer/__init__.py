"""macaron_trainer: LoRA (SFT, DPO) and full-parameter training of llama GGUF models in PyTorch."""

__version__ = "0.1.0"

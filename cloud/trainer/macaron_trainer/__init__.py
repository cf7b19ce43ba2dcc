"""macaron_trainer: LoRA (SFT, DPO, GRPO) and full-parameter training of llama GGUF models in PyTorch."""

__version__ = "0.1.0"

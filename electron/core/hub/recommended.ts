/**
 * The curated first-run list: real Hugging Face GGUF repos, small to large, and the Tall base's
 * family (Qwen3 mixture-of-experts). Sizes are the offered quantization's file size on the hub
 * (rounded); the hub's own listing (`hub.repo`) gives the exact bytes before downloading.
 */
import type { RecommendedModel } from "../../api";

const GB = 1_000_000_000;

export const RECOMMENDED_MODELS: readonly RecommendedModel[] = [
  {
    repo: "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
    quant: "Q4_K_M",
    label: "Qwen2.5 1.5B Instruct",
    tier: "small",
    approxSizeBytes: Math.round(1.12 * GB),
    note: "Fast answers on any laptop; 4 GB RAM is enough.",
  },
  {
    repo: "unsloth/Qwen3-1.7B-GGUF",
    quant: "Q4_K_M",
    label: "Qwen3 1.7B",
    tier: "small",
    approxSizeBytes: Math.round(1.11 * GB),
    note: "Small and quick, with a thinking mode; 4 GB RAM.",
  },
  {
    repo: "bartowski/Llama-3.2-3B-Instruct-GGUF",
    quant: "Q4_K_M",
    label: "Llama 3.2 3B Instruct",
    tier: "small",
    approxSizeBytes: Math.round(2.02 * GB),
    note: "General chat on 8 GB RAM.",
  },
  {
    repo: "bartowski/Qwen2.5-7B-Instruct-GGUF",
    quant: "Q4_K_M",
    label: "Qwen2.5 7B Instruct",
    tier: "medium",
    approxSizeBytes: Math.round(4.68 * GB),
    note: "Better answers; 16 GB RAM or a GPU with 6 GB.",
  },
  {
    repo: "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF",
    quant: "Q4_K_M",
    label: "Llama 3.1 8B Instruct",
    tier: "medium",
    approxSizeBytes: Math.round(4.92 * GB),
    note: "Strong all-rounder; 16 GB RAM or a GPU with 6 GB.",
  },
  {
    repo: "bartowski/Qwen2.5-Coder-7B-Instruct-GGUF",
    quant: "Q4_K_M",
    label: "Qwen2.5 Coder 7B Instruct",
    tier: "medium",
    approxSizeBytes: Math.round(4.68 * GB),
    note: "Code; 16 GB RAM or a GPU with 6 GB.",
  },
  {
    repo: "unsloth/Qwen3-14B-GGUF",
    quant: "Q4_K_M",
    label: "Qwen3 14B",
    tier: "large",
    approxSizeBytes: Math.round(9.0 * GB),
    note: "Needs 16 GB RAM, faster with a 12 GB GPU.",
  },
  {
    repo: "bartowski/Qwen2.5-32B-Instruct-GGUF",
    quant: "Q4_K_M",
    label: "Qwen2.5 32B Instruct",
    tier: "large",
    approxSizeBytes: Math.round(19.85 * GB),
    note: "Needs 32 GB RAM or a 24 GB GPU.",
  },
  {
    repo: "Qwen/Qwen3-30B-A3B-GGUF",
    quant: "Q4_K_M",
    label: "Qwen3 30B-A3B (MoE)",
    tier: "tall",
    approxSizeBytes: Math.round(18.6 * GB),
    note: "The Tall base's family: 30B mixture-of-experts, 3B active per token, so it runs at small-model speed; 32 GB RAM; with a GPU, as many layers as fit its VRAM run there and the rest on the CPU.",
  },
  {
    repo: "unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF",
    quant: "Q4_K_M",
    label: "Qwen3 30B-A3B Instruct 2507 (MoE)",
    tier: "tall",
    approxSizeBytes: Math.round(18.6 * GB),
    note: "The July 2025 instruct update of the same MoE (no thinking mode); 32 GB RAM.",
  },
  {
    repo: "unsloth/Qwen3-235B-A22B-GGUF",
    quant: "Q4_K_M",
    label: "Qwen3 235B-A22B (MoE)",
    tier: "tall",
    approxSizeBytes: Math.round(142.6 * GB),
    note: "The largest of the family, split into several files: a workstation with 192 GB RAM or GPUs with experts on the CPU.",
  },
];

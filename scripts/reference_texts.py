"""The texts the Go encoder's parity tests embed: short, long (past every
model's window), Unicode, CJK, emoji, LaTeX, control characters and blank.
scripts/reference_vectors.py and scripts/convert_onnx_model.py both use them."""

LONG = (
    "Transformers have become the dominant architecture for sequence modelling. "
    "We study how attention heads specialise during training, measuring their entropy, "
    "their positional bias and the tokens they attend to across forty checkpoints. "
) * 12  # well past the 256-token window, so truncation is exercised

TEXTS = [
    "graph neural networks",
    "Methods that learn from expert value functions",
    "A cat sits on the mat.",
    LONG,
    "Naïve café résumé: Über-große Straße in Zürich, São Paulo and Kraków.",
    "Ελληνικά κείμενα, русский текст, 中文分词和日本語のテキスト, 한국어 문장.",
    "Robots 🤖 learning to grasp 🍎 objects — fast 🚀 and safe ✅!",
    "We minimise $\\mathcal{L}(\\theta) = \\sum_i \\|f_\\theta(x_i) - y_i\\|_2^2 + \\lambda \\|\\theta\\|_1$ with $\\textbf{SGD}$.",
    "Self-supervised pre-training (e.g., BERT, GPT-3) on 10^9 tokens; F1=0.93±0.02 vs. 87.5% accuracy.",
    "tab\tseparated\nnew line\r\ncarriage   and  double  spaces\u00a0nbsp\u200bzero-width",
    "   ",
    "supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis " + "a" * 120,
    "Accurate contact modeling is fundamental to understanding hand–object interaction.",
]

// Package embed turns text into dense vectors. Every provider implements
// Embedder: the in-process models (NewLocal: a WordPiece tokenizer and a
// BERT encoder whose matrix kernels are timed on the machine and the
// fastest kept, Choices), an OpenAI-compatible endpoint, a Pair of models
// whose vectors are joined, and the Cache in front of any of them. It also
// holds the vector arithmetic (Dot, Normalize, Quantize) and the codec
// (EncodeVector) the stores share.
package embed

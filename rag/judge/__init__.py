"""Models citewise trains itself: small cross-encoders from the shipped MiniLM weights, int8 ONNX,
loaded with a sha256 check and scored in batches (`model.PairModel`). `support.SupportJudge`: is a
claim supported, contradicted or unstated by its source? Their data and training: eval/judge/."""

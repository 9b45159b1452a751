"""port_wavenet transform: the paddle side's channel mixes that torch does with 1x1 nn.Conv1d.

  "1x1 conv: paddle [in, out] transposed, kernel axis added" -> the paddle array ([in, out] of an
      nn.Linear, or [levels, channels] of the nn.Embedding whose lookup equals torch's 1x1
      start conv on one-hot input) transposed to [out, in] and reshaped to torch's
      [out, in, 1] conv kernel.

The packed filter | gate conv uses verify_truth's built-in "torch rows A:B ..." rule."""


def convert(transform, paddle_array, torch_array):
    if not transform.startswith("1x1 conv: paddle [in, out] transposed"):
        return None
    return paddle_array.T.reshape(torch_array.shape)

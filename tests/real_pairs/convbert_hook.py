"""verify_truth hook for convbert: SeparableConv1D's bias is [out] in paddle, [out, 1] in HF."""


def convert(transform, paddle_array, torch_array):
    if transform.startswith("reshape"):
        return paddle_array.reshape(torch_array.shape)
    return None

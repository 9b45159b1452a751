"""port_convnext transforms: the paddle side keeps NCHW, so its pointwise MLP is a 1x1 Conv2D
(weight [out, in, 1, 1]) where the torch side has an nn.Linear on NHWC (weight [out, in], the
same element order), and its layer scale `gamma` is [C, 1, 1] where torch's `ls` is [C].
Both are plain reshapes: "reshape ..." reshapes the paddle array to the torch shape."""


def convert(transform, paddle_array, torch_array):
    if transform.startswith("reshape"):
        return paddle_array.reshape(torch_array.shape)
    return None

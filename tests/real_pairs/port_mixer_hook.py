"""port_mixer transform: the paddle side embeds patches with a strided Conv2D (weight
[D, C, p, p]); the torch side cuts the image into patches flattened in (p1, p2, c) order
("b c (h p1) (w p2) -> b (h w) (p1 p2 c)") and projects them with one nn.Linear (weight
[D, p*p*C]). "conv [D, C, p, p] -> Linear [D, (p1 p2 c)]" moves the channel axis last, then
flattens: paddle_array.transpose(0, 2, 3, 1).reshape(D, p*p*C)."""


def convert(transform, paddle_array, torch_array):
    if transform.startswith("conv [D, C, p, p] -> Linear [D, (p1 p2 c)]"):
        return paddle_array.transpose(0, 2, 3, 1).reshape(torch_array.shape)
    return None

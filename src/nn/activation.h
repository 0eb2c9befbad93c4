/* nn/activation.h - activation functions and their modules. */

/* nn/module.h - (being written) */

/* nn/init.h - (being written) */

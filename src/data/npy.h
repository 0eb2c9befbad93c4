/* data/npy.h - (being written) */

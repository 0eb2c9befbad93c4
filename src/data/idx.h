/* data/idx.h - (being written) */

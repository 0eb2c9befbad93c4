/* data/dataset.h - (being written) */

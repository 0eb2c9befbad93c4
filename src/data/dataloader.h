/* data/dataloader.h - (being written) */

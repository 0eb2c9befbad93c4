/* optim/optim.h - (being written) */

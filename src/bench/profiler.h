/* bench/profiler.h - the op profiler (torch.profiler), built on the dispatcher. */

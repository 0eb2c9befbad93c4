/* tests/test_data.c - (being written) */
#include "test.h"

void test_data(void) {}

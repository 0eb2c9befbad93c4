#include "test.h"
void test_debug(void) {}

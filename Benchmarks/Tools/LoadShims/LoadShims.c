// Empty: LoadShims is its header (include/LoadShims.h).
#include "LoadShims.h"

#ifndef CHATFEED_CSQLITE_SHIM_H
#define CHATFEED_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro over a function-pointer cast that Swift cannot import.
static inline sqlite3_destructor_type chatfeed_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/// sqlite3_config is variadic, which Swift cannot call.
static inline int chatfeed_sqlite_config_memstatus(int on) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on); }

#endif

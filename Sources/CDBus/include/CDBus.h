#ifndef CDBUS_SHIM_H
#define CDBUS_SHIM_H
#include <dbus/dbus.h>

/* The type codes are macros of the form ((int) 's'), which Swift cannot import ("only numeric
   and string macro literals supported"). These constants carry them across under our prefix. */
static const int cdbus_type_invalid = DBUS_TYPE_INVALID;
static const int cdbus_type_boolean = DBUS_TYPE_BOOLEAN;
static const int cdbus_type_int32 = DBUS_TYPE_INT32;
static const int cdbus_type_uint32 = DBUS_TYPE_UINT32;
static const int cdbus_type_int64 = DBUS_TYPE_INT64;
static const int cdbus_type_uint64 = DBUS_TYPE_UINT64;
static const int cdbus_type_double = DBUS_TYPE_DOUBLE;
static const int cdbus_type_string = DBUS_TYPE_STRING;
static const int cdbus_type_object_path = DBUS_TYPE_OBJECT_PATH;
static const int cdbus_type_array = DBUS_TYPE_ARRAY;
static const int cdbus_type_variant = DBUS_TYPE_VARIANT;
static const int cdbus_type_dict_entry = DBUS_TYPE_DICT_ENTRY;
static const int cdbus_type_unix_fd = DBUS_TYPE_UNIX_FD;

/* dbus_message_append_args and dbus_message_get_args are variadic, which Swift cannot call;
   the MPRIS target builds and reads every message with the DBusMessageIter API instead. */
/* Loads libdbus-1.so.3 if it is not loaded yet (Loader.c). NULL when it is ready, else why it
   cannot be (dlerror's words). */
const char *cdbus_load(void);
#endif

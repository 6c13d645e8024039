/* The libdbus functions MPRIS and the sleep watcher call, each forwarding to libdbus-1.so.3,
   which is opened on the first call (or cdbus_load()) rather than by the loader at every
   start: with libsystemd, libgcrypt and the compression libraries it needs, part of the
   1.4 ms every hark process spent mapping and relocating libraries it might not use before
   main (docs/PERFORMANCE.md, "Libraries opened on first use"). */
#include "CDBus.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* Every function of the library that hark calls, with its declaration's parameters: the
   compiler checks each forwarder below against the library's own header. */
#define DBUS_FUNCTIONS(X) \
  X(void, dbus_bus_add_match, (DBusConnection *connection, const char *rule, DBusError *error), (connection, rule, error)) \
  X(DBusConnection *, dbus_bus_get_private, (DBusBusType type, DBusError *error), (type, error)) \
  X(dbus_bool_t, dbus_bus_name_has_owner, (DBusConnection *connection, const char *name, DBusError *error), (connection, name, error)) \
  X(dbus_bool_t, dbus_bus_register, (DBusConnection *connection, DBusError *error), (connection, error)) \
  X(int, dbus_bus_release_name, (DBusConnection *connection, const char *name, DBusError *error), (connection, name, error)) \
  X(int, dbus_bus_request_name, (DBusConnection *connection, const char *name, unsigned int flags, DBusError *error), (connection, name, flags, error)) \
  X(void, dbus_connection_close, (DBusConnection *connection), (connection)) \
  X(void, dbus_connection_flush, (DBusConnection *connection), (connection)) \
  X(dbus_bool_t, dbus_connection_get_socket, (DBusConnection *connection, int *fd), (connection, fd)) \
  X(DBusConnection *, dbus_connection_open_private, (const char *address, DBusError *error), (address, error)) \
  X(DBusMessage *, dbus_connection_pop_message, (DBusConnection *connection), (connection)) \
  X(dbus_bool_t, dbus_connection_read_write, (DBusConnection *connection, int timeout_milliseconds), (connection, timeout_milliseconds)) \
  X(dbus_bool_t, dbus_connection_send, (DBusConnection *connection, DBusMessage *message, dbus_uint32_t *client_serial), (connection, message, client_serial)) \
  X(DBusMessage *, dbus_connection_send_with_reply_and_block, (DBusConnection *connection, DBusMessage *message, int timeout_milliseconds, DBusError *error), (connection, message, timeout_milliseconds, error)) \
  X(void, dbus_connection_set_exit_on_disconnect, (DBusConnection *connection, dbus_bool_t exit_on_disconnect), (connection, exit_on_disconnect)) \
  X(void, dbus_connection_unref, (DBusConnection *connection), (connection)) \
  X(void, dbus_error_free, (DBusError *error), (error)) \
  X(void, dbus_error_init, (DBusError *error), (error)) \
  X(dbus_bool_t, dbus_error_is_set, (const DBusError *error), (error)) \
  X(void, dbus_free, (void *memory), (memory)) \
  X(char *, dbus_get_local_machine_id, (void), ()) \
  X(const char *, dbus_message_get_interface, (DBusMessage *message), (message)) \
  X(const char *, dbus_message_get_member, (DBusMessage *message), (message)) \
  X(dbus_bool_t, dbus_message_get_no_reply, (DBusMessage *message), (message)) \
  X(const char *, dbus_message_get_path, (DBusMessage *message), (message)) \
  X(const char *, dbus_message_get_sender, (DBusMessage *message), (message)) \
  X(const char *, dbus_message_get_signature, (DBusMessage *message), (message)) \
  X(int, dbus_message_get_type, (DBusMessage *message), (message)) \
  X(dbus_bool_t, dbus_message_is_signal, (DBusMessage *message, const char *iface, const char *signal_name), (message, iface, signal_name)) \
  X(void, dbus_message_iter_abandon_container, (DBusMessageIter *iter, DBusMessageIter *sub), (iter, sub)) \
  X(dbus_bool_t, dbus_message_iter_append_basic, (DBusMessageIter *iter, int type, const void *value), (iter, type, value)) \
  X(dbus_bool_t, dbus_message_iter_close_container, (DBusMessageIter *iter, DBusMessageIter *sub), (iter, sub)) \
  X(int, dbus_message_iter_get_arg_type, (DBusMessageIter *iter), (iter)) \
  X(void, dbus_message_iter_get_basic, (DBusMessageIter *iter, void *value), (iter, value)) \
  X(int, dbus_message_iter_get_element_type, (DBusMessageIter *iter), (iter)) \
  X(dbus_bool_t, dbus_message_iter_init, (DBusMessage *message, DBusMessageIter *iter), (message, iter)) \
  X(void, dbus_message_iter_init_append, (DBusMessage *message, DBusMessageIter *iter), (message, iter)) \
  X(dbus_bool_t, dbus_message_iter_next, (DBusMessageIter *iter), (iter)) \
  X(dbus_bool_t, dbus_message_iter_open_container, (DBusMessageIter *iter, int type, const char *contained_signature, DBusMessageIter *sub), (iter, type, contained_signature, sub)) \
  X(void, dbus_message_iter_recurse, (DBusMessageIter *iter, DBusMessageIter *sub), (iter, sub)) \
  X(DBusMessage *, dbus_message_new_error, (DBusMessage *reply_to, const char *error_name, const char *error_message), (reply_to, error_name, error_message)) \
  X(DBusMessage *, dbus_message_new_method_call, (const char *bus_name, const char *path, const char *iface, const char *method), (bus_name, path, iface, method)) \
  X(DBusMessage *, dbus_message_new_method_return, (DBusMessage *method_call), (method_call)) \
  X(DBusMessage *, dbus_message_new_signal, (const char *path, const char *iface, const char *name), (path, iface, name)) \
  X(void, dbus_message_unref, (DBusMessage *message), (message)) \
  X(char *, dbus_try_get_local_machine_id, (DBusError *error), (error))

/* The real functions, filled once under pthread_once. */
#define POINTER(ret, name, params, args) ret(*name) params;
static struct {
  DBUS_FUNCTIONS(POINTER)
} real;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *library = dlopen("libdbus-1.so.3", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(failure, sizeof failure, "%s", dlerror());
    return;
  }
#define RESOLVE(ret, name, params, args)                                                     \
  if (!(*(void **)&real.name = dlsym(library, #name))) {                                      \
    snprintf(failure, sizeof failure, "libdbus-1.so.3 has no " #name);                              \
    return;                                                                                  \
  }
  DBUS_FUNCTIONS(RESOLVE)
}

const char *cdbus_load(void) {
  pthread_once(&once, load);
  return failure[0] ? failure : NULL;
}

/* Each loads the library first, so that no caller can reach a function not yet resolved; a
   caller learns from cdbus_load() whether it can be loaded at all. (libdbus's header declares
   them with default visibility, so they cannot be hidden: a debug build, which exports its
   symbols, then also serves libpulse's calls into libdbus through them, to the same library.) */
#define FORWARD(ret, name, params, args)                                                     \
  ret name params {                                                                          \
    pthread_once(&once, load);                                                               \
    return real.name args;                                                                   \
  }
DBUS_FUNCTIONS(FORWARD)

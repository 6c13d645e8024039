import Glibc

/// Writes an executable script (close-on-exec: a process another thread spawns meanwhile,
/// through system(3), must not hold it open for writing, or running it fails with ETXTBSY).
func writeScript(_ path: String, _ text: String) {
  writeFile(path, text, mode: 0o755)
}

/// Writes `text` to the file at `path` (close-on-exec, as `writeScript`).
func writeFile(_ path: String, _ text: String, mode: mode_t = 0o644) {
  let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
  _ = text.withCString { write(fd, $0, strlen($0)) }
  close(fd)
}

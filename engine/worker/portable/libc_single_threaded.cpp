// Only in the portable podium-worker (PODIUM_WORKER_PORTABLE), which links against glibc 2.31.
// GCC 12's libstdc++ (its static archive and its headers, built against glibc >= 2.32) reads
// __libc_single_threaded to skip atomic reference counting while a process has one thread; glibc
// 2.31 has no such variable. Ours stays 0 ("maybe several threads"), so the counts are always
// atomic: correct everywhere, and the agent runs threads anyway.
extern "C" {
char __libc_single_threaded = 0;
}

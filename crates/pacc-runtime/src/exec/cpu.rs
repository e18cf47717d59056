//! The CPU backend: runs a plan's operations in submission order (or, for tests, in a seeded
//! random order the dependencies allow), each kernel parallel over planes with rayon.
// TODO(helper): implement.

// Graph replays on the stream's own queue (the default): see replay.h.
#include "replay.h"

int main() { return run_replays("graph replay"); }

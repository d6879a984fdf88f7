// hipshim-test: env=HIPSHIM_GRAPH_QUEUES=4 env=HIPSHIM_STATS=graph-stats.txt
// Graph replays with independent branches spread over up to four queues: see replay.h. The
// test reads the stats the run writes (graph-stats.txt) for the queues the launches used.
#include "replay.h"

int main() { return run_replays("graph replay (spread)"); }

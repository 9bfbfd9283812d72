// The page's first script, on its own: in a browser it asks the snapshot at once, while the
// app's script (src/main.ts) is still loading, so the two come in together.
import { askEarlySnapshot } from '$lib/host/early';

askEarlySnapshot();

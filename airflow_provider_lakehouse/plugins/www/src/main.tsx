/**
 * The Lakehouse plugin's entry point. Airflow's UI imports this bundle and renders the component it finds
 * under the React app's name (or, failing that, ``AirflowPlugin``); the three views of
 * ``plugins/lakehouse.py`` share this bundle, so each name is registered here.
 *
 * The component renders inside Airflow's own Chakra UI provider (React and Chakra are Airflow's instances,
 * see vite.config.ts), so it follows Airflow's theme and light/dark mode.
 */
import { LakehouseView, type PluginProps } from "./App";

const VIEW_NAMES = ["Lakehouse", "Lakehouse data flow", "Lakehouse lineage"] as const;

const Plugin = (props: PluginProps) => <LakehouseView {...props} />;

for (const name of VIEW_NAMES) Reflect.set(globalThis, name, Plugin);

export default Plugin;

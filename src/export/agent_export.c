/* The public calls of skinner.h over a loaded agent (the Python module's
 * Policy.export_onnx). */
#include "../train/actor.h"
#include "export.h"

sk_status sk_agent_export_onnx(const sk_agent *agent, const char *path) {
    return sk_export_onnx(sk_agent_loaded(agent), path);
}

sk_status sk_agent_export_c(const sk_agent *agent, const char *path) {
    return sk_export_c_header(sk_agent_loaded(agent), path, NULL);
}

// Runs an exported ONNX model with ONNX Runtime (npm's onnxruntime-node) over recorded rows,
// as tests/export/driver.c runs the C header:
//     node onnx_run.js MODEL DIR OBS_DTYPE OBS_SIZE MASK_SIZE STATE_SIZE HEADS|-DIM
// reads DIR/obs.bin, start.bin and mask.bin (if there); writes DIR/onnx_out.bin (per row: the
// action, the actor's output, the value, state_out; floats) and, with masks, DIR/onnx_nomask.bin
// (the same with one row of ones as the mask: every action allowed). A feed-forward model takes all rows as
// one batch; a recurrent one steps row by row, carrying state_out into state_in and zeroing it
// where an episode starts.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

async function main() {
    const [model, dir, dtype, obsText, maskText, stateText, headsText] = process.argv.slice(2);
    const obsSize = Number(obsText), maskSize = Number(maskText), stateSize = Number(stateText);
    const heads = Number(headsText); // > 0: discrete heads; < 0: -dimension
    const session = await ort.InferenceSession.create(model);
    const obsBytes = fs.readFileSync(path.join(dir, 'obs.bin'));
    const start = fs.readFileSync(path.join(dir, 'start.bin'));
    const rows = start.length;
    const obs = dtype === 'uint8'
        ? new Uint8Array(obsBytes.buffer, obsBytes.byteOffset, rows * obsSize)
        : new Float32Array(obsBytes.buffer.slice(obsBytes.byteOffset,
                                                 obsBytes.byteOffset + rows * obsSize * 4));
    const maskPath = path.join(dir, 'mask.bin');
    const masks = maskSize && fs.existsSync(maskPath) ? new Uint8Array(fs.readFileSync(maskPath)) : null;
    const outNames = heads > 0 ? Array.from({length: heads}, (_, h) => `logits_${h}`) : ['mean'];

    async function run(first, count, state, withMask) {
        const feeds = {
            obs: new ort.Tensor(dtype, obs.subarray(first * obsSize, (first + count) * obsSize),
                                [count, obsSize]),
        };
        if (stateSize) feeds.state_in = new ort.Tensor('float32', state, [count, stateSize]);
        if (withMask && masks)
            feeds.mask = new ort.Tensor('uint8', masks.subarray(first * maskSize,
                                                                (first + count) * maskSize),
                                        [count, maskSize]);
        else if (maskSize) // one row of ones, broadcast over the batch: every action allowed
            feeds.mask = new ort.Tensor('uint8', new Uint8Array(maskSize).fill(1), [1, maskSize]);
        return session.run(feeds);
    }

    async function pass(withMask) {
        const values = [];
        let state = new Float32Array(stateSize);
        const step = stateSize ? 1 : rows;
        for (let first = 0; first < rows; first += step) {
            const count = Math.min(step, rows - first);
            if (stateSize && start[first]) state = new Float32Array(stateSize);
            const result = await run(first, count, state, withMask);
            for (let r = 0; r < count; r++) {
                const action = result.action;
                const width = action.dims[1];
                for (let k = 0; k < width; k++) values.push(Number(action.data[r * width + k]));
                for (const name of outNames) {
                    const t = result[name];
                    const n = t.dims[1];
                    for (let k = 0; k < n; k++) values.push(t.data[r * n + k]);
                }
                values.push(result.value.data[r]);
                if (stateSize)
                    for (let k = 0; k < stateSize; k++) values.push(result.state_out.data[r * stateSize + k]);
            }
            if (stateSize) state = Float32Array.from(result.state_out.data);
        }
        return Buffer.from(new Float32Array(values).buffer);
    }

    fs.writeFileSync(path.join(dir, 'onnx_out.bin'), await pass(true));
    if (masks) fs.writeFileSync(path.join(dir, 'onnx_nomask.bin'), await pass(false));
}

main().catch((error) => {
    console.error(`onnx_run.js: ${error.stack || error}`);
    process.exit(1);
});

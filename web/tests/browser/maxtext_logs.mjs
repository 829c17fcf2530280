// Two MaxText logs in the real format (absl prefixes, step lines, memory and FLOPs lines) for
// the import and compare test. Constant steady step times make every ratio exact.
function stepLine(step, seconds, tflopsPerStep, tokensPerStep, loss) {
  return `I1121 16:46:01.000000 140 metric_logger.py:190] completed step: ${step}, seconds: ${seconds.toFixed(3)}, ` +
    `TFLOP/s/device: ${(tflopsPerStep / seconds).toFixed(3)}, Tokens/s/device: ${(tokensPerStep / seconds).toFixed(3)}, ` +
    `total_weights: ${tokensPerStep}, loss: ${loss.toFixed(3)}`;
}

export function maxtextLog({ steps = 30, seconds, tflopsPerStep, tokensPerStep, usedGb, capacityGb }) {
  const lines = [
    'I1121 16:40:00.000000 140 pyconfig.py:900] Config param model_name: llama3-8b',
    'I1121 16:40:00.000001 140 pyconfig.py:900] Config param per_device_batch_size: 1.0',
    'I1121 16:40:00.000002 140 pyconfig.py:900] Config param max_target_length: 4096',
    `I1121 16:40:00.000003 140 pyconfig.py:900] Config param steps: ${steps}`,
    'System Information: Jax Version: 0.6.2, Jaxlib Version: 0.6.2',
    `I1121 16:41:05.000000 140 max_utils.py:741] Total memory size: ${usedGb.toFixed(1)} GB, Output size: 1.0 GB, Temp size: 1.0 GB, Argument size: 1.0 GB, Host temp size: 0.0 GB.`,
    'Per train step:',
    ` Total TFLOPs: ${tflopsPerStep.toFixed(2)} `,
    ' split as 94.54% learnable weight flops and 5.46% attention flops',
    'I1121 16:41:05.100000 140 metric_logger.py:275] number parameters: 8.030 billion',
  ];
  for (let s = 0; s < steps; s++) {
    // Step 0 compiles; the rest run at the steady time.
    lines.push(stepLine(s, s === 0 ? seconds * 20 : seconds, tflopsPerStep, tokensPerStep, 10 - s * 0.1));
    if (s === 2) {
      lines.push('Memstats: After first optimizer step:');
      lines.push(`\tUsing (GB) ${usedGb.toFixed(2)} / ${capacityGb.toFixed(2)} (50.0%) on TPU_0(process=0,(0,0,0,0))`);
    }
  }
  return lines.join('\n') + '\n';
}

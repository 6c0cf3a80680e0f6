// The umbrella module: `import hwaccel;` brings in every part of the library.
export module hwaccel;
export import hwaccel.base;
export import hwaccel.hardware;
export import hwaccel.detect;
export import hwaccel.registry;
export import hwaccel.plan;
export import hwaccel.training;
export import hwaccel.doctor;
export import hwaccel.telemetry;
export import hwaccel.fleet;
export import hwaccel.watch;
export import hwaccel.place;
